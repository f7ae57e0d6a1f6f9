module github.com/identitylib/identity

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	go.etcd.io/bbolt v1.5.0
	golang.org/x/crypto v0.58.0
)

require (
	github.com/getkin/kin-openapi v0.152.0 // indirect
	github.com/julienschmidt/httprouter v1.3.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
