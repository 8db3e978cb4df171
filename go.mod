module github.com/praxis-os/continuity

go 1.26.8

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/uuid v1.6.0
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/philippgille/chromem-go v0.7.0
	github.com/tiktoken-go/tokenizer v0.10.0
	golang.org/x/sys v0.41.0
)

require github.com/dlclark/regexp2/v2 v2.5.1 // indirect
