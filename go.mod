module github.com/politecrawl/robots

go 1.24.0

require (
	github.com/jimsmart/grobotstxt v1.0.3
	github.com/temoto/robotstxt v1.1.2
	golang.org/x/net v0.47.0
	golang.org/x/sync v0.19.0
)

require golang.org/x/text v0.31.0 // indirect
