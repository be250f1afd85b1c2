package api

import (
	"reflect"

	"netmon/app/api/router"
)

// apiDescription is the document's description: the API's conventions.
const apiDescription = `netmon's hub API. Conventions:

* Bodies are JSON; timestamps named ` + "`ts`" + ` are Unix seconds. Member names match in any case, a name given twice
  in one object is refused (400), invalid UTF-8 in a string becomes U+FFFD, unknown names are ignored.
* Every error other than the authentication failure is ` + "`{\"error\": \"<message>\"}`" + ` with a fitting status:
  400 for a malformed or out-of-range parameter (the message names the parameter and its range),
  404 for an unknown ` + "`/api/...`" + ` path, 405 (with an ` + "`Allow`" + ` header) for a wrong method,
  413 when a body exceeds the limit (1 MiB unless a route says otherwise), 415 for a body that is not JSON,
  500 for a server fault (its detail is in the hub log under the response's ` + "`X-Request-Id`" + `).
* A protected route without a valid session or bearer answers 401 ` + "`{\"error\":\"oturum gerekli\",\"auth_required\":true,\"message\":\"session required\"}`" + `.
* Each operation's ` + "`x-netmon-permission`" + ` is its access class from the spec: P (public), S (any signed-in identity),
  or a permission (view, operate, analyze, devices, agents, admin, global-admin), AG (agent identity), EN (enroll token),
  metrics (an admin, or the -metrics-token bearer). An operation with ` + "`x-netmon-global: true`" + ` covers every site:
  site-bound identities get 403 whatever their role.
* Every response carries ` + "`X-Request-Id`" + ` (the request's own when it sent a well-formed one).
* Paths outside ` + "`/api`" + `, ` + "`/ws`" + `, ` + "`/healthz`" + `, ` + "`/readyz`" + ` and ` + "`/metrics`" + ` serve the web UI shell.`

// docInfo is what the document says beyond the table.
func docInfo(version string) router.Info {
	return router.Info{Title: "netmon", Version: version, Description: apiDescription,
		ErrorBody: ErrorBody{}, AuthErrorBody: AuthErrorBody{}, LocalPkg: reflect.TypeFor[Server]().PkgPath(),
		SchemaPrefixes: schemaPrefixes}
}

// schemaPrefixes keep the document's schema names, which the console's
// generated types use, when a package is split or renamed: the types of
// these packages are named with the prefix of the package they came from.
var schemaPrefixes = map[string]string{
	"netmon/app/fleet/agents": "Fleet", // app/fleet split by job (issue 13)
	"netmon/app/fleet/enroll": "Fleet",
	"netmon/app/fleet/intake": "Fleet",
	"netmon/capture/pcaprec":  "Record", // was capture/record
	"netmon/alerting/health":  "",       // the health score's body, was app/api's (issue 29)
}
