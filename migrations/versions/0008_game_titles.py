"""game titles: a host may give a game a title ("Friday cards"); emails, lists and pages show it

Revision ID: 6a3e0008t1t1e
Revises: 11a0006ma1l0
"""
from alembic import op
import sqlalchemy as sa

revision = '6a3e0008t1t1e'
down_revision = '11a0006ma1l0'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('games', sa.Column('title', sa.String(length=80), nullable=True))


def downgrade():
    # Not a batch "move and copy" on SQLite: dropping the old games table would cascade to
    # every seat (foreign keys are on). SQLite 3.35+ drops a column in place.
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE games DROP COLUMN title")
    else:
        op.drop_column('games', 'title')
