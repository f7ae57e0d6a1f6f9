package console

// RouteInfo is a route as the tests see it.
type RouteInfo struct {
	Method, Path string
	Public       bool
}

// Routes returns every route of the console, for the tests that must
// cover each one.
func Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range routeTable() {
		out = append(out, RouteInfo{Method: rt.method, Path: rt.path, Public: rt.access == public || rt.access == asset})
	}
	return out
}
