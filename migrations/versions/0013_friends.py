"""friends: table talk, rematch series, private notes, ratings, when a game ended

A game without finished_at (finished before this revision, or by the old code during a deploy)
ended at its last update: readers use coalesce(finished_at, updated_at).

Revision ID: e8b40013frn6
Revises: d7a30012lng5
"""
import sqlalchemy as sa
from alembic import op

revision = 'e8b40013frn6'
down_revision = 'd7a30012lng5'
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")
STAMP = sa.DateTime(timezone=True)
GAME_COLUMNS = (
    ('finished_at', STAMP, dict(nullable=True)),
    ('rated', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('series_id', sa.String(length=16), dict(nullable=True)),
    ('series_no', sa.Integer(), dict(nullable=True)),
    ('rematch_id', sa.String(length=16), dict(nullable=True)),
    ('chat_spectators', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('last_message_id', sa.Integer(), dict(nullable=False, server_default='0')),
)
SEAT_COLUMNS = (
    ('notes', sa.Text(), dict(nullable=True)),
    ('chat_muted', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('chat_hidden', JSON, dict(nullable=True)),
    ('chat_email', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
    ('chat_emailed_at', STAMP, dict(nullable=True)),
    ('rematch_accepted_at', STAMP, dict(nullable=True)),
)
IDENTITY_COLUMNS = (
    ('player_name', sa.String(length=40), dict(nullable=True)),
    ('leaderboard_hidden', sa.Boolean(), dict(nullable=False, server_default=sa.false())),
)


def upgrade():
    for name, kind, extra in GAME_COLUMNS:
        op.add_column('games', sa.Column(name, kind, **extra))
    op.create_index('ix_games_series_id', 'games', ['series_id'])
    for name, kind, extra in SEAT_COLUMNS:
        op.add_column('seats', sa.Column(name, kind, **extra))
    for name, kind, extra in IDENTITY_COLUMNS:
        op.add_column('identities', sa.Column(name, kind, **extra))
    op.create_index('uq_identities_player_name', 'identities', ['player_name'], unique=True)
    op.create_table(
        'game_messages',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_id', sa.String(length=16), nullable=False),
        sa.Column('seat', sa.Integer(), nullable=True),
        sa.Column('author_kind', sa.String(length=12), nullable=False),
        sa.Column('author_name', sa.String(length=40), nullable=False),
        sa.Column('author_key', sa.String(length=254), nullable=True),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('created_at', STAMP, nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_game_messages_game_id_id', 'game_messages', ['game_id', 'id'])
    op.create_index('ix_game_messages_author_key', 'game_messages', ['author_key'])
    op.create_table(
        'ratings',
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('mu', sa.Float(), nullable=False),
        sa.Column('sigma', sa.Float(), nullable=False),
        sa.Column('games', sa.Integer(), nullable=False, server_default='0'),
        sa.Column('updated_at', STAMP, nullable=False),
        sa.PrimaryKeyConstraint('email_key'),
    )
    op.create_table(
        'rating_changes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_id', sa.String(length=16), nullable=False),
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('seat', sa.Integer(), nullable=False),
        sa.Column('rank', sa.Integer(), nullable=False),
        sa.Column('mu_before', sa.Float(), nullable=False),
        sa.Column('sigma_before', sa.Float(), nullable=False),
        sa.Column('mu_after', sa.Float(), nullable=False),
        sa.Column('sigma_after', sa.Float(), nullable=False),
        sa.Column('created_at', STAMP, nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('game_id', 'email_key', name='uq_rating_changes_game_key'),
    )
    op.create_index('ix_rating_changes_email_key', 'rating_changes', ['email_key'])


def downgrade():
    op.drop_index('ix_rating_changes_email_key', table_name='rating_changes')
    op.drop_table('rating_changes')
    op.drop_table('ratings')
    op.drop_index('ix_game_messages_author_key', table_name='game_messages')
    op.drop_index('ix_game_messages_game_id_id', table_name='game_messages')
    op.drop_table('game_messages')
    op.drop_index('uq_identities_player_name', table_name='identities')
    op.drop_index('ix_games_series_id', table_name='games')
    # SQLite 3.35+ drops a column in place (a batch copy of seats would cascade).
    for table, columns in (('identities', IDENTITY_COLUMNS), ('seats', SEAT_COLUMNS),
                           ('games', GAME_COLUMNS)):
        for name, _kind, _extra in reversed(columns):
            if op.get_bind().dialect.name == "sqlite":
                op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
            else:
                op.drop_column(table, name)
