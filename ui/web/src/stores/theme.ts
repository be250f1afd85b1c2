// Light and dark themes: follows the system unless the person picks one;
// the choice is kept in localStorage and applied as data-theme on <html>.
import { defineStore } from 'pinia'

export type ThemeMode = 'system' | 'light' | 'dark'
export type Theme = 'light' | 'dark'

const KEY = 'netmon.theme'

function systemTheme(): Theme {
  return typeof window !== 'undefined' && window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
}

function storedMode(): ThemeMode {
  try {
    const v = localStorage.getItem(KEY)
    if (v === 'light' || v === 'dark' || v === 'system') return v
  } catch {
    /* storage unavailable */
  }
  return 'system'
}

export const useTheme = defineStore('theme', {
  state: () => ({ mode: storedMode() as ThemeMode, system: systemTheme() as Theme }),
  getters: {
    theme: (s): Theme => (s.mode === 'system' ? s.system : s.mode),
  },
  actions: {
    /** Applies the theme and follows system changes; call once at start. */
    init(): void {
      const mq = window.matchMedia?.('(prefers-color-scheme: dark)')
      mq?.addEventListener?.('change', (e) => {
        this.system = e.matches ? 'dark' : 'light'
        this.apply()
      })
      this.apply()
    },
    set(mode: ThemeMode): void {
      this.mode = mode
      try {
        localStorage.setItem(KEY, mode)
      } catch {
        /* ignore */
      }
      this.apply()
    },
    /** system -> light -> dark -> system */
    cycle(): void {
      this.set(this.mode === 'system' ? 'light' : this.mode === 'light' ? 'dark' : 'system')
    },
    apply(): void {
      document.documentElement.dataset.theme = this.theme
      document.documentElement.style.colorScheme = this.theme
    },
  },
})
