// Roles and permissions of spec section 5 item 7 (plus the multi-site
// roles), mirrored from the hub's app/auth/roles.go. /api/auth/status
// returns the role only, so the console derives the permissions here and
// shows only what the role may use.

export type Permission = 'view' | 'operate' | 'analyze' | 'devices' | 'agents' | 'admin' | 'audit' | 'global-admin'
export type Role = 'admin' | 'netops' | 'auditor' | 'analyst' | 'viewer' | 'site-admin' | 'global-admin'

const ALL: Permission[] = ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit']

const MATRIX: Record<Role, Permission[]> = {
  admin: ALL,
  netops: ['view', 'operate', 'analyze', 'devices'],
  analyst: ['view', 'analyze'],
  viewer: ['view'],
  // netmon's read-only auditor: the audit log, compliance evidence and reviews
  auditor: ['view', 'audit'],
  'site-admin': ALL,
  'global-admin': [...ALL, 'global-admin'],
}

/** The roles that may be assigned in this mode, most privileged first. */
export function roles(multiSite: boolean): Role[] {
  return multiSite
    ? ['global-admin', 'admin', 'site-admin', 'netops', 'auditor', 'analyst', 'viewer']
    : ['admin', 'netops', 'auditor', 'analyst', 'viewer']
}

/** Whether role holds permission p (unknown roles hold nothing). */
export function allows(role: string | null | undefined, p: Permission, multiSite = false): boolean {
  if (!role || !(role in MATRIX)) return false
  const r = role as Role
  if ((r === 'site-admin' || r === 'global-admin') && !multiSite) return false
  if (r === 'admin' && p === 'global-admin') return !multiSite
  return MATRIX[r].includes(p)
}

/**
 * Whether the role may change nothing at all, not even what any signed-in
 * user may (renaming an agent): the hub's auth.ReadOnly, true for the
 * auditor only.
 */
export function readOnly(role: string | null | undefined): boolean {
  return role === 'auditor'
}

/** Every permission the role holds. */
export function permissionsOf(role: string | null | undefined, multiSite = false): Permission[] {
  return ([...ALL, 'global-admin'] as Permission[]).filter((p) => allows(role, p, multiSite))
}
