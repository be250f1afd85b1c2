// Alert severities are 0-10 (10 worst); the console reuses the syslog
// colour classes (0 worst) by band.
export function alertSevClass(sev: number): string {
  if (sev >= 8) return 'sev-1'
  if (sev >= 6) return 'sev-3'
  if (sev >= 4) return 'sev-4'
  return 'sev-6'
}
