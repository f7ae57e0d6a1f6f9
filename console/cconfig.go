package console

// cconfigRoutes are the routes of a workspace's configuration: its
// settings, roles and groups, and claim mappers.
func cconfigRoutes() []route {
	var rt []route
	rt = append(rt, settingsRoutes()...)
	rt = append(rt, rolesRoutes()...)
	rt = append(rt, mappersRoutes()...)
	return rt
}
