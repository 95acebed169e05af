"""long games: standing orders, attention-aware notifications, reminders, nudges, seat votes

Games from before this revision keep the DOS call a race (``standing_dos`` false); new
games allow standing orders to call and catch unless the host says otherwise.

Revision ID: d7a30012lng5
Revises: c6f20011tz1n
"""
import sqlalchemy as sa
from alembic import op

revision = 'd7a30012lng5'
down_revision = 'c6f20011tz1n'
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")
STAMP = sa.DateTime(timezone=True)
GAME_COLUMNS = (
    ('standing_dos', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('reminders_sent', JSON, dict(nullable=True)),
)
SEAT_COLUMNS = (
    ('standing_orders', JSON, dict(nullable=True)),
    ('last_seen_at', STAMP, dict(nullable=True)),
    ('turn_notified_at', STAMP, dict(nullable=True)),
    ('turns_missed', sa.Integer(), dict(nullable=False, server_default='0')),
    ('reminders', JSON, dict(nullable=True)),
    ('nudges_off', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('last_nudged_at', STAMP, dict(nullable=True)),
)


def upgrade():
    for name, kind, extra in GAME_COLUMNS:
        op.add_column('games', sa.Column(name, kind, **extra))
    for name, kind, extra in SEAT_COLUMNS:
        op.add_column('seats', sa.Column(name, kind, **extra))
    op.create_table(
        'seat_votes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_id', sa.String(length=16), nullable=False),
        sa.Column('target_seat', sa.Integer(), nullable=False),
        sa.Column('voter_seat', sa.Integer(), nullable=False),
        sa.Column('choice', sa.String(length=8), nullable=False),
        sa.Column('created_at', STAMP, nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('game_id', 'target_seat', 'voter_seat', name='uq_seat_votes_voter'),
    )
    op.create_index('ix_seat_votes_game_id', 'seat_votes', ['game_id'])


def downgrade():
    op.drop_index('ix_seat_votes_game_id', table_name='seat_votes')
    op.drop_table('seat_votes')
    # SQLite 3.35+ drops a column in place (a batch copy of seats would cascade).
    for table, columns in (('seats', SEAT_COLUMNS), ('games', GAME_COLUMNS)):
        for name, _kind, _extra in reversed(columns):
            if op.get_bind().dialect.name == "sqlite":
                op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
            else:
                op.drop_column(table, name)
