"""mail guarantees: outbox lease owners, inbound retries

A claimed outbox row names the worker claim that holds it (``lease_owner``), so a worker
sends and records only rows it still owns. An inbound message whose processing failed on a
bug is retried (``attempts``, ``next_attempt_at``) before it is given up on.

Revision ID: 11a0006ma1l0
Revises: 1dent17y0006
"""
from alembic import op
import sqlalchemy as sa

revision = '11a0006ma1l0'
down_revision = '1dent17y0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_owner', sa.String(length=80), nullable=True))
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.add_column(sa.Column('next_attempt_at', sa.DateTime(timezone=True),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.drop_column('next_attempt_at')
        batch_op.drop_column('attempts')
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.drop_column('lease_owner')
