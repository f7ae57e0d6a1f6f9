package oidc

import "strings"

// device is what the account page tells of a session's User-Agent: the
// browser and the operating system, each "" when not recognised.
type device struct {
	Browser, OS string
}

// The browsers parseUserAgent recognises, by a token of their
// User-Agent, in the order they are looked for: every Chromium-based
// browser names Chrome and Safari too, and Chrome names Safari, so the
// more specific come first.
var browserTokens = []struct{ token, name string }{
	{"Edg/", "Edge"}, {"EdgA/", "Edge"}, {"EdgiOS/", "Edge"}, {"Edge/", "Edge"},
	{"OPR/", "Opera"}, {"OPT/", "Opera"}, {"OPiOS/", "Opera"}, {"Opera", "Opera"},
	{"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
	{"CriOS/", "Chrome"}, {"Chrome/", "Chrome"}, {"Chromium/", "Chrome"},
	{"Safari/", "Safari"},
}

// The operating systems parseUserAgent recognises, in the order they are
// looked for: an iPad and an iPhone say "like Mac OS X", Android and
// ChromeOS say Linux.
var osTokens = []struct{ token, name string }{
	{"Windows", "Windows"},
	{"iPhone", "iOS"}, {"iPad", "iOS"}, {"iPod", "iOS"},
	{"CrOS", "ChromeOS"},
	{"Android", "Android"},
	{"Macintosh", "macOS"}, {"Mac OS X", "macOS"},
	{"Linux", "Linux"}, {"X11", "Linux"},
}

// parseUserAgent recognises the common browsers and systems of a
// User-Agent header. It reads no version: a session list needs to tell
// devices apart, and the versions of frozen User-Agents (Chrome's,
// Safari's) are not the browser's anyway.
func parseUserAgent(ua string) device {
	var d device
	for _, b := range browserTokens {
		if strings.Contains(ua, b.token) {
			d.Browser = b.name
			break
		}
	}
	for _, o := range osTokens {
		if strings.Contains(ua, o.token) {
			d.OS = o.name
			break
		}
	}
	return d
}
