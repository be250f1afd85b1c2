// Who is signed in, and what the role may do. The hub's /api/auth/status
// gives the identity, its role's permissions, whether the role is
// read-only and the roles that may be assigned: the console keeps no copy
// of the role matrix. With authentication off every request is the admin.
import { defineStore } from 'pinia'
import { ApiError, get, post } from '../api/client'
import type { AuthStatus, Permission, Role, StatusUser } from '../api/types'

export interface LoginResult {
  ok: boolean
  /** what to tell the person when ok is false */
  message?: string
  /** seconds to wait (429) */
  retryAfter?: number
  /** the hub refused the bootstrap password because RBAC users exist */
  legacyDisabled?: boolean
}

/** The message the console shows for the hub's ErrLegacyDisabled (app/auth/errors.go). */
export const LEGACY_DISABLED_MESSAGE = 'The bootstrap password is disabled because RBAC users exist. Sign in with your username and password.'

/** localStorage key: this hub has RBAC users, so the form stops suggesting the bootstrap password. */
export const RBAC_KEY = 'netmon.rbac'

/** Whether the hub's 401 is the bootstrap password refused under RBAC
 * ("RBAC is enabled: the legacy password is disabled …"), not a wrong one. */
export function isLegacyDisabled(msg: string): boolean {
  return /legacy password is disabled/i.test(msg) || /RBAC is enabled/i.test(msg)
}

function remember(key: string): void {
  try {
    localStorage.setItem(key, '1')
  } catch {
    /* storage off: the form keeps its default wording */
  }
}

export const useSession = defineStore('session', {
  state: () => ({
    loaded: false,
    required: true,
    authenticated: false,
    user: null as StatusUser | null,
    sso: false,
    multiSite: false,
    /** authentication is off and the hub listens beyond this machine */
    exposed: false,
    /** a user account exists: sign-in asks for a username */
    rbacUsers: false,
    /** the legacy bootstrap password still signs in */
    bootstrapPassword: false,
    /** what the caller's role may use, as the hub says */
    permissions: [] as string[],
    /** the role changes nothing anywhere (the auditor) */
    readOnly: false,
    /** the roles that may be assigned in this mode, most privileged first */
    roles: [] as Role[],
  }),
  getters: {
    /** Signed in, or authentication is off. */
    signedIn: (s): boolean => s.loaded && (!s.required || s.authenticated),
    /** The effective role: the user's, or admin while authentication is off. */
    role: (s): string | null => (!s.required ? 'admin' : (s.user?.role ?? null)),
    /** Limited to one site: the audit log (which covers every site) is refused. */
    siteBound: (s): boolean => s.required && !!s.user?.site,
    displayName: (s): string => (!s.required ? 'admin (authentication off)' : (s.user?.username ?? '')),
  },
  actions: {
    can(p: Permission): boolean {
      return this.signedIn && this.permissions.includes(p)
    },
    apply(st: AuthStatus): void {
      this.loaded = true
      this.required = st.required
      this.authenticated = st.authenticated
      this.user = st.user ?? null
      this.sso = !!st.sso
      this.multiSite = !!st.multi_site
      this.exposed = !!st.exposed
      this.rbacUsers = !!st.rbac_users
      this.bootstrapPassword = !!st.bootstrap_password
      this.permissions = st.permissions ?? []
      this.readOnly = !!st.read_only
      this.roles = (st.roles ?? []) as Role[]
    },
    async refresh(): Promise<void> {
      this.apply(await get<AuthStatus>('/api/auth/status'))
    },
    /** Marks the session gone (a 401 from a protected route). */
    expire(): void {
      this.authenticated = false
      this.user = null
      this.permissions = []
      this.readOnly = false
    },
    async login(username: string, password: string): Promise<LoginResult> {
      const body = username.trim() ? { username: username.trim(), password } : { password }
      try {
        await post('/api/login', body)
      } catch (e) {
        if (e instanceof ApiError) {
          if (e.status === 429) {
            const wait = e.retryAfter ?? 60
            // The hub says what it limited: this address, or the account.
            const what = /account/i.test(e.message) ? 'for this account' : 'from this address'
            return { ok: false, retryAfter: wait, message: `Too many failed sign-ins ${what}. Try again in ${wait} s.` }
          }
          if (e.status === 401) {
            if (isLegacyDisabled(e.message)) {
              remember(RBAC_KEY)
              return { ok: false, legacyDisabled: true, message: LEGACY_DISABLED_MESSAGE }
            }
            return { ok: false, message: `Wrong ${username.trim() ? 'username or password' : 'password'}.` }
          }
          if (e.status === 403) return { ok: false, message: `Refused by the hub: ${e.message}` }
          return { ok: false, message: e.message }
        }
        return { ok: false, message: `The hub did not answer: ${(e as Error).message}` }
      }
      // A named account signed in: this hub has RBAC users.
      if (username.trim()) remember(RBAC_KEY)
      await this.refresh()
      return { ok: true }
    },
    async logout(): Promise<void> {
      try {
        await post('/api/logout')
      } catch {
        /* the session may already be gone */
      }
      this.expire()
      await this.refresh().catch(() => undefined)
    },
  },
})
