// Console routes. Each route names the permission it needs; the guard
// sends signed-out people to /login and others away from what their role
// may not use (the navigation never shows those links either).
import { createRouter, createWebHistory, type RouteRecordRaw, type Router } from 'vue-router'
import type { Permission } from './api/types'
import { useSession } from './stores/session'

declare module 'vue-router' {
  interface RouteMeta {
    title?: string
    perm?: Permission
    public?: boolean
    /** covers every site: refused to site-bound identities */
    global?: boolean
  }
}

export const routes: RouteRecordRaw[] = [
  { path: '/', redirect: '/live' },
  { path: '/login', name: 'login', component: () => import('./views/LoginView.vue'), meta: { title: 'Sign in', public: true } },
  { path: '/live', name: 'live', component: () => import('./views/LiveView.vue'), meta: { title: 'Live', perm: 'view' } },
  { path: '/history', name: 'history', component: () => import('./views/HistoryView.vue'), meta: { title: 'History', perm: 'view' } },
  { path: '/compare', name: 'compare', component: () => import('./views/CompareView.vue'), meta: { title: 'Compare', perm: 'view' } },
  { path: '/agents', name: 'agents', component: () => import('./views/AgentsView.vue'), meta: { title: 'Agents', perm: 'view' } },
  { path: '/agents/:id(\\d+)', name: 'agent', component: () => import('./views/AgentDetailView.vue'), meta: { title: 'Agent', perm: 'view' } },
  { path: '/agents/:id(\\d+)/processes/:name', name: 'process', component: () => import('./views/ProcessView.vue'), meta: { title: 'Process', perm: 'view' } },
  { path: '/processes', name: 'processes', component: () => import('./views/ProcessesView.vue'), meta: { title: 'Processes', perm: 'view' } },
  { path: '/hosts/:ip', name: 'host', component: () => import('./views/HostView.vue'), meta: { title: 'Host', perm: 'view' } },
  { path: '/flows', name: 'flows', component: () => import('./views/FlowsView.vue'), meta: { title: 'Flows', perm: 'view' } },
  { path: '/events', name: 'events', component: () => import('./views/EventsView.vue'), meta: { title: 'Events', perm: 'view' } },
  { path: '/topology', name: 'topology', component: () => import('./views/TopologyView.vue'), meta: { title: 'Topology', perm: 'view' } },
  { path: '/geo', name: 'geo', component: () => import('./views/GeoView.vue'), meta: { title: 'Geo', perm: 'view' } },
  { path: '/devices', name: 'devices', component: () => import('./views/DevicesView.vue'), meta: { title: 'Devices', perm: 'view' } },
  { path: '/devices/:id(\\d+)', name: 'device', component: () => import('./views/DeviceDetailView.vue'), meta: { title: 'Device', perm: 'view' } },
  { path: '/alerts', name: 'alerts', component: () => import('./views/AlertsView.vue'), meta: { title: 'Alerts', perm: 'view' } },
  { path: '/incidents', name: 'incidents', component: () => import('./views/IncidentsView.vue'), meta: { title: 'Incidents', perm: 'view' } },
  { path: '/silences', name: 'silences', component: () => import('./views/SilencesView.vue'), meta: { title: 'Silences', perm: 'view' } },
  { path: '/syslog', name: 'syslog', component: () => import('./views/SyslogView.vue'), meta: { title: 'Syslog', perm: 'view' } },
  { path: '/reports', name: 'reports', component: () => import('./views/ReportsView.vue'), meta: { title: 'Reports', perm: 'view' } },
  { path: '/compliance', name: 'compliance', component: () => import('./views/ComplianceView.vue'), meta: { title: 'Compliance', perm: 'view' } },
  { path: '/ai', name: 'ai', component: () => import('./views/AssistantView.vue'), meta: { title: 'Assistant', perm: 'analyze' } },
  { path: '/admin', redirect: '/admin/users' },
  { path: '/admin/users', name: 'users', component: () => import('./views/admin/UsersView.vue'), meta: { title: 'Users', perm: 'admin' } },
  { path: '/admin/tokens', name: 'tokens', component: () => import('./views/admin/TokensView.vue'), meta: { title: 'API tokens', perm: 'admin' } },
  { path: '/admin/enroll-tokens', name: 'enroll-tokens', component: () => import('./views/admin/EnrollTokensView.vue'), meta: { title: 'Enroll tokens', perm: 'admin' } },
  { path: '/admin/alert-delivery', name: 'alert-delivery', component: () => import('./views/admin/AlertDeliveryView.vue'), meta: { title: 'Alert delivery', perm: 'admin', global: true } },
  { path: '/admin/alert-settings', name: 'alert-settings', component: () => import('./views/admin/AlertSettingsView.vue'), meta: { title: 'Alert settings', perm: 'admin', global: true } },
  { path: '/admin/ai-providers', name: 'ai-providers', component: () => import('./views/admin/AIProvidersView.vue'), meta: { title: 'AI providers', perm: 'global-admin', global: true } },
  { path: '/admin/audit', name: 'audit', component: () => import('./views/admin/AuditView.vue'), meta: { title: 'Audit log', perm: 'audit', global: true } },
  { path: '/about', name: 'about', component: () => import('./views/AboutView.vue'), meta: { title: 'About', public: true } },
  { path: '/:rest(.*)*', name: 'notfound', component: () => import('./views/NotFoundView.vue'), meta: { title: 'Not found', public: true } },
]

export function installGuards(router: Router): void {
  router.beforeEach(async (to) => {
    const session = useSession()
    if (!session.loaded) {
      try {
        await session.refresh()
      } catch {
        // The hub is unreachable: show the page; its calls will say so.
        return true
      }
    }
    if (to.name === 'login') {
      if (session.signedIn) return typeof to.query.next === 'string' && to.query.next.startsWith('/') ? to.query.next : '/live'
      return true
    }
    if (to.meta.public) return true
    if (!session.signedIn) return { name: 'login', query: to.fullPath !== '/live' ? { next: to.fullPath } : {} }
    if ((to.meta.perm && !session.can(to.meta.perm)) || (to.meta.global && session.siteBound)) return { name: 'live', query: { denied: String(to.meta.title ?? to.path) } }
    return true
  })
  router.afterEach((to) => {
    document.title = to.meta.title ? `${to.meta.title} · netmon` : 'netmon'
  })
}

export function makeRouter(): Router {
  const router = createRouter({ history: createWebHistory(), routes })
  installGuards(router)
  return router
}
