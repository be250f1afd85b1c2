// The device page's interface status (spec 3 thresholds).
import { describe, expect, test } from 'vitest'
import { ifaceStatus } from '../src/lib/devices'

describe('ifaceStatus', () => {
  test('spec 3 thresholds, the higher direction, down first', () => {
    expect(ifaceStatus({ oper_up: true, rx_util_pct: 69.9, tx_util_pct: 0 })).toBe('normal')
    expect(ifaceStatus({ oper_up: true, rx_util_pct: 0, tx_util_pct: 70 })).toBe('warning')
    expect(ifaceStatus({ oper_up: true, rx_util_pct: 89.99, tx_util_pct: 10 })).toBe('warning')
    expect(ifaceStatus({ oper_up: true, rx_util_pct: 10, tx_util_pct: 90 })).toBe('critical')
    expect(ifaceStatus({ oper_up: true, rx_util_pct: null, tx_util_pct: null })).toBe('normal')
    expect(ifaceStatus({ oper_up: false, rx_util_pct: 95, tx_util_pct: 95 })).toBe('down')
  })
})
