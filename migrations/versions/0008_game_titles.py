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
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('title', sa.String(length=80), nullable=True))


def downgrade():
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('title')
