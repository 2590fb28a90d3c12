// Package docs is wcomm's reference, one markdown file per topic: NAME.md is printed by
// `wcomm help NAME`, and its first line ("# Title") is the line `wcomm help` lists it with. The
// files are embedded in the binary, so the pages a person reads here and the help a binary
// prints are the same text. Adding a topic is adding a file. Its tests also keep the layout that
// develop.md describes: no package imports one of a higher floor.
package docs

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// Topics holds the topic files, *.md of this folder.
//
//go:embed *.md
var Topics embed.FS

// Topic is one page of the reference.
type Topic struct {
	Name  string // what `wcomm help NAME` takes: the file's name without .md, lower case
	Title string // the file's first line without its "# "
	Body  string // the whole text, the title line included
}

// Aliases are other names a topic answers to.
var Aliases = map[string]string{"exit": "exit-codes"}

// Load reads the topic files of fsys: every NAME.md, whose first line must be "# Title".
func Load(fsys fs.FS) ([]Topic, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	var out []Topic
	for _, file := range names {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		first, _, _ := strings.Cut(string(data), "\n")
		title, ok := strings.CutPrefix(first, "# ")
		if !ok || strings.TrimSpace(title) == "" {
			return nil, fmt.Errorf("docs/%s:1: a topic starts with a '# Title' line", file)
		}
		out = append(out, Topic{Name: strings.ToLower(strings.TrimSuffix(file, ".md")), Title: strings.TrimSpace(title), Body: string(data)})
	}
	return out, nil
}

// Reference is every topic: the files of Topics and those a program makes from its own registries
// (Generated), read once, by name.
type Reference struct {
	Generated []func() Topic
	once      sync.Once
	topics    []Topic
	err       error
}

// All returns every topic, by name.
func (r *Reference) All() ([]Topic, error) {
	r.once.Do(func() {
		r.topics, r.err = Load(Topics)
		for _, gen := range r.Generated {
			r.topics = append(r.topics, gen())
		}
		sort.Slice(r.topics, func(i, j int) bool { return r.topics[i].Name < r.topics[j].Name })
	})
	return r.topics, r.err
}

// Find returns the topic called name (any case, or one of its aliases).
func (r *Reference) Find(name string) (Topic, bool) {
	name = strings.ToLower(name)
	if a, ok := Aliases[name]; ok {
		name = a
	}
	ts, _ := r.All()
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return Topic{}, false
}

// Names are the topics' names.
func (r *Reference) Names() []string {
	ts, _ := r.All()
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}
