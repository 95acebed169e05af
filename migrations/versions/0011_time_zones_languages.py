"""time zones and languages: each seat and each identity reads in its own zone and language

``time_zone`` is an IANA name (None: UTC); ``language`` a shipped language (None: en).

Revision ID: c6f20011tz1n
Revises: b5e10010br0w
"""
import sqlalchemy as sa
from alembic import op

revision = 'c6f20011tz1n'
down_revision = 'b5e10010br0w'
branch_labels = None
depends_on = None

TABLES = ('seats', 'identities')


def upgrade():
    for table in TABLES:
        op.add_column(table, sa.Column('time_zone', sa.String(length=64), nullable=True))
        op.add_column(table, sa.Column('language', sa.String(length=8), nullable=True))


def downgrade():
    # Not a batch "move and copy" on SQLite: dropping the old seats table would cascade
    # (foreign keys are on). SQLite 3.35+ drops a column in place.
    for table in reversed(TABLES):
        for column in ('language', 'time_zone'):
            if op.get_bind().dialect.name == "sqlite":
                op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
            else:
                op.drop_column(table, column)
