// Package router is the machinery under app/api's route table: the Route
// row and its access classes (Perm), the typed adapters (JSON, Raw, RawIn)
// that bind parameters and bodies from struct tags and record the types
// they read and write, the registration of the table on a gin engine
// (Register, the only caller of engine.Handle), and the OpenAPI 3.1
// document and /api/docs page rendered from the same rows (Render, Drift).
//
// It is its own package so that app/api is what a reader of the API
// wants: routes.go (THE table), one handler file per resource and the
// middleware. The machinery knows nothing of netmon's services; it turns
// a row into a handler and a description, and hands every error to the
// ErrorWriter app/api gives it. Its binding errors are app/errs kinds
// (Invalid naming the parameter or body field, TooLarge) or, for the two
// refusals no service kind describes (415, 408), a StatusError.
package router
