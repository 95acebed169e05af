"""browser sessions kept on the server

The session cookie holds an opaque random id; what the pages keep for a browser (its seats,
host controls, account sign-in, CSRF secret) is a row here, keyed by the id's SHA-256, so
signing out, rotating a token or ending an account session ends it on the server.

Revision ID: b5e10010br0w
Revises: a4c41e0009ar
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = 'b5e10010br0w'
down_revision = 'a4c41e0009ar'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'browser_sessions',
        sa.Column('id_hash', sa.String(length=64), nullable=False),
        sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()),
                                                 'postgresql'), nullable=False),
        sa.Column('account_session_id', sa.String(length=24), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id_hash'),
    )
    with op.batch_alter_table('browser_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_browser_sessions_account_session_id'),
                              ['account_session_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_browser_sessions_expires_at'), ['expires_at'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('browser_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_browser_sessions_expires_at'))
        batch_op.drop_index(batch_op.f('ix_browser_sessions_account_session_id'))
    op.drop_table('browser_sessions')
