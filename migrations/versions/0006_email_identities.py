"""email identities: sign in with your address; which address opens which seat

Revision ID: 1dent17y0006
Revises: 5eat1d0005aa
Create Date: 2026-12-01 09:00:00

Seats get the address that opens them by signing in (``owner_email``, ``owner_key``), set
only by a claim with the invite sent to that address or by the player confirming it; seats
that existed before stay without one until their player confirms an address (nobody can
tell now whether their address was set by their player or by the host). New tables: the
sign-in codes, the signed-in sessions, and each identity's settings.
"""
from alembic import op
import sqlalchemy as sa

revision = '1dent17y0006'
down_revision = '5eat1d0005aa'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'login_codes',
        sa.Column('id', sa.String(length=24), nullable=False),
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('address', sa.String(length=254), nullable=False),
        sa.Column('nonce', sa.String(length=64), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('login_codes', schema=None) as batch_op:
        batch_op.create_index('ix_login_codes_key_created', ['email_key', 'created_at'],
                              unique=False)
    op.create_table(
        'account_sessions',
        sa.Column('id', sa.String(length=24), nullable=False),
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('secret_hash', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('user_agent', sa.String(length=200), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('account_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_account_sessions_email_key'), ['email_key'],
                              unique=False)
    op.create_table(
        'identities',
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('address', sa.String(length=254), nullable=False),
        sa.Column('digest', sa.Boolean(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('email_key'),
    )
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.add_column(sa.Column('owner_email', sa.String(length=254), nullable=True))
        batch_op.add_column(sa.Column('owner_key', sa.String(length=254), nullable=True))
        batch_op.add_column(sa.Column('digest_chosen', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.create_index(batch_op.f('ix_seats_owner_key'), ['owner_key'], unique=False)


def downgrade():
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_seats_owner_key'))
        batch_op.drop_column('digest_chosen')
        batch_op.drop_column('owner_key')
        batch_op.drop_column('owner_email')
    op.drop_table('identities')
    with op.batch_alter_table('account_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_account_sessions_email_key'))
    op.drop_table('account_sessions')
    with op.batch_alter_table('login_codes', schema=None) as batch_op:
        batch_op.drop_index('ix_login_codes_key_created')
    op.drop_table('login_codes')
