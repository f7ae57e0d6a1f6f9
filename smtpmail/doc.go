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
package smtpmail
