// Package defaults holds the defaults of the plugin's options that the
// robotstxt command also states (it does not import the plugin, which
// imports Colly), so that both read one value.
package defaults

import "time"

const (
	// MaxCrawlDelay is the largest Crawl-delay the plugin honours.
	MaxCrawlDelay = 30 * time.Second
	// Delay spaces a host whose robots.txt gives no Crawl-delay (as
	// StormCrawler's default does).
	Delay = time.Second
	// Retries is how many times a request answered 429 or a 5xx (but 501
	// and 505) is sent again after its host's pause, as Scrapy retries them
	// by default.
	Retries = 2
)
