package cloudsearch

import (
	"encoding/json"
	"testing"
)

// validConfig returns the default configuration of index "docs" changed
// by mutate, failing the test if it does not validate.
func validConfig(t *testing.T, mutate func(*Config)) Config {
	t.Helper()
	c := DefaultConfig()
	c.IndexName = "docs"
	mutate(&c)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDefinitionGolden(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"default", func(*Config) {}},
		{"hnsw_scalar", func(c *Config) {
			c.VectorAlgorithmType = HNSW
			c.CompressionType = ScalarQuantization
			c.EmbeddingDimensionality = 768
		}},
		{"hnsw_binary_fields", func(c *Config) {
			c.VectorAlgorithmType = "HNSW"
			c.CompressionType = "binaryQuantization"
			c.LanguageAnalyzer = "en.lucene"
			c.HiddenFieldKeys = []string{"secret", "author"}
			c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}, {Key: "year", Field: "year_field", Type: "INT32"}, {Key: "tags", Type: "COLLECTION"}, {Key: "secret"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t, tt.mutate)
			def := c.Definition()
			raw, err := json.MarshalIndent(def, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "index_"+tt.name+".golden.json", append(raw, '\n'))
			// The compression must be attached to the profile the vector field uses.
			var vecProfile string
			for _, f := range def.Fields {
				if f.Name == "embedding" {
					vecProfile = f.VectorSearchProfile
				}
			}
			for _, p := range def.VectorSearch.Profiles {
				if p.Name == vecProfile && (p.Compression != "") != (c.CompressionType != "") {
					t.Errorf("profile %s compression = %q, config compression %q", p.Name, p.Compression, c.CompressionType)
				}
			}
		})
	}
}

func TestCheckDefinition(t *testing.T) {
	c := DefaultConfig()
	c.IndexName = "docs"
	c.FilterableMetadataFieldKeys = FilterableFields{{Key: "author"}}
	c = c.normalize()
	good := c.Definition()
	if err := c.checkDefinition(good); err != nil {
		t.Fatalf("own definition: %v", err)
	}
	hiding := c
	hiding.HiddenFieldKeys = []string{c.MetadataStringFieldKey, c.DocIDFieldKey}
	if err := hiding.checkDefinition(hiding.Definition()); err != nil {
		t.Errorf("own definition with hidden fields: %v", err)
	}
	clone := func() IndexDefinition {
		var d IndexDefinition
		b, _ := json.Marshal(good)
		_ = json.Unmarshal(b, &d)
		return d
	}
	tests := []struct {
		name    string
		mutate  func(*IndexDefinition)
		setting string
	}{
		{"key", func(d *IndexDefinition) { d.Fields[0].Key = false; d.Fields[4].Key = true }, "idFieldKey"},
		{"vector field", func(d *IndexDefinition) { d.Fields[2].Name = "vec" }, "embeddingFieldKey"},
		{"dimensions", func(d *IndexDefinition) { d.Fields[2].Dimensions = 768 }, "embeddingDimensionality"},
		{"chunk", func(d *IndexDefinition) { d.Fields[1].Name = "content" }, "chunkFieldKey"},
		{"filterable", func(d *IndexDefinition) { d.Fields = d.Fields[:5] }, "filterableMetadataFieldKeys.author"},
		{"hidden metadata", func(d *IndexDefinition) { d.Fields[3].Retrievable = new(bool) }, "hiddenFieldKeys"},
		{"hidden doc_id", func(d *IndexDefinition) { d.Fields[4].Retrievable = new(bool) }, "hiddenFieldKeys"},
		{"hidden key", func(d *IndexDefinition) { d.Fields[0].Retrievable = new(bool) }, "idFieldKey"},
		{"doc_id not filterable", func(d *IndexDefinition) { d.Fields[4].Filterable = new(bool) }, "docIdFieldKey"},
		{"key not filterable", func(d *IndexDefinition) { d.Fields[0].Filterable = new(bool) }, "idFieldKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := clone()
			tt.mutate(&d)
			err := c.checkDefinition(d)
			me, ok := err.(*MismatchError)
			if !ok {
				t.Fatalf("err = %v, want *MismatchError", err)
			}
			if me.Setting != "sink.cloudsearch."+tt.setting {
				t.Errorf("Setting = %s, want sink.cloudsearch.%s", me.Setting, tt.setting)
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"\ufeff42", 42, false}, {"7", 7, false}, {"\ufeff 1200\n", 1200, false}, {"\ufeffmany", 0, true},
	}
	for _, tt := range tests {
		got, err := parseCount([]byte(tt.in))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseCount(%q) = %d, %v", tt.in, got, err)
		}
	}
}
