// Package archtest holds tests that guard the project's structure.
package archtest
