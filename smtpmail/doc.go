// Package smtpmail submits email over SMTP and builds the messages the
// library sends: verification and password reset emails
// (VerificationMessage).
//
// Package identity decides what is sent, to whom and when (a mail job in
// the queue, a fresh token per attempt, Queue.Begin); the dispatcher in
// package delivery sends it with a Sender. This package speaks SMTP and
// MIME only: STARTTLS (required when chosen), implicit TLS, or plain text
// to a loopback address only; certificates always verified; SASL PLAIN
// when the settings have a username; the whole exchange bounded by the
// caller's context. A recipient refused with a 5xx reply is a permanent
// failure (Result.Permanent); anything else may be retried.
//
// The emails speak the language of the page the user asked from
// (VerificationMail.Locale; English when the message catalogue lacks it),
// every word from the one catalogue the hosted pages use
// (internal/i18n, keys "mail.*"), and carry the workspace's branding: its
// name in the subject and text, its accent colour on the HTML button and
// link, and its logo embedded in the message (multipart/related), never
// fetched from a server. Names are text wherever they go: escaped in
// HTML, encoded in headers (RFC 2047), their line breaks never a line of
// their own; an address or link that could break a header or an SMTP
// command is refused (ErrBadAddress, ErrBadLink) as a permanent failure.
package smtpmail
