package httpapi

// RouteAccess is a route's pattern and who may call it, for the isolation
// matrix.
type RouteAccess struct{ Pattern, Access string }

// RouteTable returns every route of the handler built with opt.
func RouteTable(opt Options) []RouteAccess {
	var out []RouteAccess
	for _, r := range routes(nil, nil, opt) {
		out = append(out, RouteAccess{r.pattern, r.access.String()})
	}
	return out
}

// OpenAPI returns the OpenAPI document of the handler built with opt.
func OpenAPI(opt Options) ([]byte, error) { return openAPIDocument(opt) }

// Operations returns the patterns of the routes the table operations
// describes.
func Operations() []string {
	var out []string
	for pattern := range operations {
		out = append(out, pattern)
	}
	return out
}
