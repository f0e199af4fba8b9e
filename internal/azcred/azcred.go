// Package azcred reads the names of the Azure credentials that the
// embedder (embedder.auth) and the Cloud AI Search store
// (sink.cloudsearch.credential) take, so that one word means one
// credential in both settings.
package azcred

import (
	"strconv"
	"strings"
)

// Kind is a kind of credential.
type Kind int

// The kinds of credential.
const (
	// Key is an API key or admin key (the SDK's AzureKeyCredential).
	Key Kind = iota + 1
	// Default is azidentity's DefaultAzureCredential.
	Default
	// ManagedIdentity is azidentity's ManagedIdentityCredential.
	ManagedIdentity
)

// Parse returns the kind of credential that s names: key, apiKey,
// KeyCredential or AzureKeyCredential; default or DefaultAzureCredential;
// managedIdentity or ManagedIdentityCredential; in any letter case and with
// or without underscores (api_key, managed_identity). It reports false for
// anything else, the empty string included.
func Parse(s string) (Kind, bool) {
	switch strings.ToLower(strings.ReplaceAll(s, "_", "")) {
	case "key", "apikey", "keycredential", "azurekeycredential":
		return Key, true
	case "default", "defaultazurecredential":
		return Default, true
	case "managedidentity", "managedidentitycredential":
		return ManagedIdentity, true
	}
	return 0, false
}

// maxShown is the length of the longest value Quote shows.
const maxShown = 32

// Quote returns s quoted for an error about a credential setting, or, when
// s might be a secret pasted into the setting instead of a credential's
// name (longer than any name, or holding characters other than letters,
// '_' and '-'), a phrase that does not show it: the setting is next to
// where keys go, and errors must never carry one.
func Quote(s string) string {
	if len(s) > maxShown || strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-')
	}) {
		return "a value (not shown: it may be a key)"
	}
	return strconv.Quote(s)
}
