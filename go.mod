module github.com/wcomm/wcomm

go 1.26

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510
	github.com/mitchellh/go-ps v1.0.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/slack-go/slack v0.35.0
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
)

require github.com/gorilla/websocket v1.5.3

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/tools v0.42.0 // indirect
)

require (
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.41.0
	golang.org/x/time v0.15.0 // indirect
)
