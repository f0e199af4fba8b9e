package embedder

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// TestManagedIdentityClientID: auth managedIdentity uses the client id of
// embedder.managedIdentityClientId, else that of AZURE_CLIENT_ID (as
// sink.cloudsearch does), else the system-assigned identity. Nothing here
// reaches a network: only the credential's options are built.
func TestManagedIdentityClientID(t *testing.T) {
	const (
		setting = "11111111-1111-1111-1111-111111111111"
		env     = "22222222-2222-2222-2222-222222222222"
	)
	tests := []struct {
		name    string
		setting string            // embedder.managedIdentityClientId
		env     map[string]string // the environment
		want    string            // client id; "" = system-assigned
		named   string            // what managedIdentityName says
	}{
		{"setting", setting, nil, setting, "the user-assigned identity " + setting + " from embedder.managedIdentityClientId"},
		{"setting wins over AZURE_CLIENT_ID", setting, map[string]string{"AZURE_CLIENT_ID": env}, setting, "from embedder.managedIdentityClientId"},
		{"AZURE_CLIENT_ID", "", map[string]string{"AZURE_CLIENT_ID": env}, env, "the user-assigned identity " + env + " from AZURE_CLIENT_ID"},
		{"empty AZURE_CLIENT_ID", "", map[string]string{"AZURE_CLIENT_ID": ""}, "", "the system-assigned identity"},
		{"no client id", "", nil, "", "the system-assigned identity (embedder.managedIdentityClientId and AZURE_CLIENT_ID are empty)"},
		{"other variables are not read", "", map[string]string{"AZURE_OPENAI_CLIENT_ID": env}, "", "the system-assigned identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Provider: ProviderAzureOpenAI, Auth: AuthManagedIdentity, ManagedIdentityClientID: tt.setting}
			getenv := func(k string) string { return tt.env[k] }
			o := managedIdentityOptions(cfg, getenv)
			var want azidentity.ManagedIDKind
			if tt.want != "" {
				want = azidentity.ClientID(tt.want)
			}
			if o.ID != want {
				t.Fatalf("managedIdentityOptions().ID = %v, want %v", o.ID, want)
			}
			if got := managedIdentityName(cfg, getenv); !strings.Contains(got, tt.named) {
				t.Fatalf("managedIdentityName() = %q, want it to contain %q", got, tt.named)
			}
		})
	}
}
