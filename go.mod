module github.com/identitylib/identity

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	go.etcd.io/bbolt v1.5.0
	golang.org/x/crypto v0.58.0
)

require golang.org/x/sys v0.49.0 // indirect
