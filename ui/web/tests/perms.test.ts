import { expect, test } from 'vitest'
import { allows, permissionsOf, readOnly, roles } from '../src/lib/perms'

test('the matrix of spec section 5 item 7', () => {
  expect(permissionsOf('admin')).toEqual(['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'])
  expect(permissionsOf('auditor')).toEqual(['view', 'audit'])
  expect(permissionsOf('netops')).toEqual(['view', 'operate', 'analyze', 'devices'])
  expect(permissionsOf('analyst')).toEqual(['view', 'analyze'])
  expect(permissionsOf('viewer')).toEqual(['view'])
})

test('multi-site roles exist only in multi-site mode; admin loses global-admin there', () => {
  expect(allows('site-admin', 'admin', false)).toBe(false)
  expect(allows('site-admin', 'admin', true)).toBe(true)
  expect(allows('global-admin', 'global-admin', true)).toBe(true)
  expect(allows('admin', 'global-admin', true)).toBe(false)
  expect(roles(false)).toEqual(['admin', 'netops', 'auditor', 'analyst', 'viewer'])
  expect(roles(true)).toContain('site-admin')
})

test('unknown or missing roles hold nothing', () => {
  expect(allows('root', 'view')).toBe(false)
  expect(allows(null, 'view')).toBe(false)
  expect(permissionsOf(undefined)).toEqual([])
})

test('only the auditor is read-only (the hub refuses it even the rename any signed-in user may do)', () => {
  expect(['admin', 'netops', 'auditor', 'analyst', 'viewer', 'site-admin', 'global-admin', '', null].filter((r) => readOnly(r))).toEqual(['auditor'])
})
