"""seat identities: tokens name a seat's public_id, never its position

Revision ID: 5eat1d0005aa
Revises: b86578fcfa14
Create Date: 2026-11-30 06:30:00

Every existing seat gets a random public_id, and remembers its index at this moment as
legacy_index: a token issued before this revision names that index, and keeps opening
exactly that seat (and no other) however the seats are renumbered later.
"""
import secrets

from alembic import op
import sqlalchemy as sa

revision = '5eat1d0005aa'
down_revision = 'b86578fcfa14'
branch_labels = None
depends_on = None

ALPHABET = "abcdefghjkmnpqrstuvwxyz"  # as dos_server.models.SEAT_ID_ALPHABET


def upgrade():
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.add_column(sa.Column('public_id', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('legacy_index', sa.Integer(), nullable=True))
    seats = sa.table('seats', sa.column('id', sa.Integer), sa.column('index', sa.Integer),
                     sa.column('public_id', sa.String), sa.column('legacy_index', sa.Integer))
    connection = op.get_bind()
    rows = connection.execute(sa.select(seats.c.id, seats.c.index)).all()
    for row_id, index in rows:
        public_id = "".join(secrets.choice(ALPHABET) for _ in range(12))
        connection.execute(seats.update().where(seats.c.id == row_id)
                           .values(public_id=public_id, legacy_index=index))
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.alter_column('public_id', existing_type=sa.String(length=16), nullable=False)
        batch_op.create_unique_constraint('uq_seats_public_id', ['public_id'])


def downgrade():
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.drop_constraint('uq_seats_public_id', type_='unique')
        batch_op.drop_column('legacy_index')
        batch_op.drop_column('public_id')
