"""game archives: a finished game's history kept compactly

After a grace period the worker replaces a finished game's event rows by one compressed
archive row (``game_archives``: the record, and only what replaying it does not give back)
and marks the game ``archived_at``. The partial index lists the games still to archive.

Downgrade puts the event rows back from the archives before it drops the table, so no
history is lost either way.

Revision ID: a4c41e0009ar
Revises: 6a3e0008t1t1e
"""
import sqlalchemy as sa
from alembic import op

revision = 'a4c41e0009ar'
down_revision = '6a3e0008t1t1e'
branch_labels = None
depends_on = None

TO_ARCHIVE = "status = 'finished' AND archived_at IS NULL"


def upgrade():
    op.create_table(
        'game_archives',
        sa.Column('game_id', sa.String(length=16), nullable=False),
        sa.Column('format', sa.Integer(), nullable=False),
        sa.Column('events', sa.Integer(), nullable=False),
        sa.Column('data', sa.LargeBinary(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id'),
    )
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('archived_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_games_to_archive', ['updated_at'], unique=False,
                              postgresql_where=sa.text(TO_ARCHIVE),
                              sqlite_where=sa.text(TO_ARCHIVE))


def downgrade():
    _restore_event_rows()
    op.drop_index('ix_games_to_archive', table_name='games')
    # Not batch mode: on SQLite it would copy and drop ``games``, and the drop cascades to
    # every game's seats and events. SQLite drops a column itself since 3.35.
    op.execute('ALTER TABLE games DROP COLUMN archived_at')
    op.drop_table('game_archives')


def _restore_event_rows():
    """Write each archived game's history back as event rows (decoded by the server code
    that wrote it: the format is versioned there)."""
    from dos_server.services.archive import decode

    bind = op.get_bind()
    events = sa.table(
        'game_events', sa.column('game_id', sa.String), sa.column('seq', sa.Integer),
        sa.column('version', sa.Integer), sa.column('seat', sa.Integer),
        sa.column('kind', sa.String), sa.column('data', sa.JSON),
        sa.column('secret', sa.JSON), sa.column('created_at', sa.DateTime(timezone=True)),
    )
    archives = bind.execute(sa.text('SELECT game_id, data FROM game_archives')).all()
    for game_id, data in archives:
        _, rows = decode(bytes(data))
        if rows:
            bind.execute(events.insert(), [
                {"game_id": game_id, "seq": r.seq, "version": r.version, "seat": r.seat,
                 "kind": r.kind, "data": r.data, "secret": r.secret,
                 "created_at": r.created_at} for r in rows])
