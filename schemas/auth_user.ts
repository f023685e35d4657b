import { col, table } from './columns.js'

export const AuthUser = table('auth_user', {
  id: col.id(),
  username: col.string({ maxLength: 150, unique: true, pattern: '^[A-Za-z0-9_.@+-]+$' }),
  email: col.string({ maxLength: 254, default: '' }),
  first_name: col.string({ maxLength: 150, default: '' }),
  last_name: col.string({ maxLength: 150, default: '' }),
  is_active: col.boolean({ default: true }),
  is_staff: col.boolean({ default: false }),
  is_superuser: col.boolean({ default: false }),
  date_joined: col.createdAt(),
  last_login: col.datetime({ nullable: true, readonly: true }),
  /** scrypt of the user's password (lib/data/passwords.ts); null: API keys only. Never shown. */
  password_hash: col.string({ nullable: true, readonly: true, secret: true }),
})
