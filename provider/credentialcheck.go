package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// check validates a credential, its kind's settings by its platform's
// rules (CredentialProfile.CredentialKinds), and builds its sets.
func (c *Credential) check(profiles []Profile) error {
	at := "credentials." + c.Name
	if !credentialName.MatchString(c.Name) {
		return fmt.Errorf("%s: name must be 1-63 lowercase letters, digits, '-', '_' and '.'", at)
	}
	var known []string
	for _, p := range credentialProfiles(profiles) {
		known = append(known, string(p.Type()))
		if p.Type() == c.Type {
			c.profile = p
		}
	}
	if c.profile == nil {
		return fmt.Errorf("%s.type: %q takes no credentials in this kpool (those that do: %s)", at, c.Type, strings.Join(known, ", "))
	}
	if err := c.checkKind(at, profiles); err != nil {
		return err
	}
	if len(c.Scopes) == 0 {
		return fmt.Errorf("%s.scopes: required: the subscriptions, accounts or projects it may be used for, or \"*\" for any", at)
	}
	c.scopes = map[string]bool{}
	for _, s := range c.Scopes {
		c.scopes[strings.ToLower(strings.TrimSpace(s))] = true
	}
	eps := c.Endpoints
	switch {
	case len(eps) == 0 && c.Kind == CredentialKubeconfig:
		return fmt.Errorf("%s.endpoints: required for kind %s: the https origins of the API servers its kubeconfig may name", at, c.Kind)
	case len(eps) == 0:
		eps = c.profile.PublicEndpoints()
	}
	o, err := kpool.ParseOrigins(eps)
	if err != nil {
		return fmt.Errorf("%s.endpoints: %v", at, err)
	}
	c.origins = o
	return c.checkUsers(at)
}

// checkKind checks the credential's kind and its settings: the kind is
// one its platform takes, and the settings are the kind's, each secret
// from a variable or a file, then by the kind's own rules.
func (c *Credential) checkKind(at string, profiles []Profile) error {
	var k CredentialKind
	switch c.Kind {
	case CredentialEmulator:
		if c.Identity == nil {
			return fmt.Errorf("%s.kind: %s is kpool dev's own kind for its emulators; a credentials file cannot use it", at, c.Kind)
		}
	case CredentialDefault:
		k = CredentialKind{Name: CredentialDefault}
	case CredentialKubeconfig:
		k = kubeconfigKind
	default:
		i := slices.IndexFunc(c.profile.CredentialKinds(), func(k CredentialKind) bool { return k.Name == c.Kind })
		if i < 0 {
			return c.unknownKind(at, profiles)
		}
		k = c.profile.CredentialKinds()[i]
	}
	if err := c.checkSettings(at, k); err != nil {
		return err
	}
	fe := &kpool.FieldErrors{}
	for _, r := range k.Required {
		if c.Settings[r] == "" {
			fe.Add(r, "required by kind %s", c.Kind)
		}
	}
	if len(*fe) == 0 && k.Check != nil {
		k.Check(fe, c)
	}
	if len(*fe) > 0 {
		var parts []string
		for _, f := range *fe {
			parts = append(parts, at+"."+f.Field+": "+f.Reason)
		}
		return fmt.Errorf("%s", strings.Join(parts, "; "))
	}
	return nil
}

// checkSettings refuses a setting kind k does not take, and a secret not
// read from exactly one variable or file.
func (c *Credential) checkSettings(at string, k CredentialKind) error {
	for _, key := range slices.Sorted(maps.Keys(c.Settings)) {
		if slices.Contains(k.keys(), key) {
			continue
		}
		var others []string
		for _, o := range c.profile.CredentialKinds() {
			if o.Name != k.Name && slices.Contains(o.keys(), key) {
				others = append(others, o.Name)
			}
		}
		switch {
		case slices.Contains(k.Secrets, key):
			return fmt.Errorf("%s.%s: unknown field: a secret is never written in the credentials file; name the variable (%sEnv) or the file (%sFile) that holds it", at, key, key, key)
		case len(others) == 0:
			return fmt.Errorf("%s: unknown field %q: kind %s takes no %s", at, key, c.Kind, key)
		}
		return fmt.Errorf("%s.%s: only %s %s credential has one: kind %s takes no %s", at, key, article(others[0]), orList(others), c.Kind, orList(c.notTaken(k)))
	}
	for _, s := range k.Secrets {
		env, file := c.Settings[s+"Env"], c.Settings[s+"File"]
		switch {
		case (env == "") == (file == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of %sEnv and %sFile (never the %s itself)", at, c.Kind, s, s, s)
		case env != "" && !envName.MatchString(env):
			// Not echoed: a secret pasted here by mistake must not reach a
			// log.
			return fmt.Errorf("%s.%sEnv: not an environment variable name (letters, digits and '_'); it names the variable that holds the %s", at, s, s)
		}
	}
	return nil
}

// notTaken are the settings of the platform's kinds that k does not take.
func (c *Credential) notTaken(k CredentialKind) []string {
	var out []string
	for _, o := range c.profile.CredentialKinds() {
		for _, n := range o.names() {
			if !slices.Contains(k.names(), n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// unknownKind is the error of a kind the platform does not take, naming
// it as another platform's profile does where one takes it.
func (c *Credential) unknownKind(at string, profiles []Profile) error {
	takes := []string{CredentialDefault, CredentialKubeconfig}
	for _, k := range c.profile.CredentialKinds() {
		takes = append(takes, k.Name)
	}
	name := c.profile.Capabilities().Name
	for _, p := range credentialProfiles(profiles) {
		for _, k := range p.CredentialKinds() {
			if k.Name == c.Kind {
				return fmt.Errorf("%s.kind: platform %s takes no %s (kind %s is not %s %s credential): use %s", at, c.Type, k.Noun, c.Kind, article(name), name, orList(takes))
			}
		}
	}
	return fmt.Errorf("%s.kind: %q is not %s %s credential kind: use %s", at, c.Kind, article(name), name, orList(takes))
}

// checkUsers reads the credential's users into its sets.
func (c *Credential) checkUsers(at string) error {
	c.users, c.groups, c.teams = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, u := range c.Users {
		field := fmt.Sprintf("%s.users[%d]", at, i)
		if u == Any {
			c.users[Any] = true
			continue
		}
		if len(u) >= len(GroupPrefix) && strings.EqualFold(u[:len(GroupPrefix)], GroupPrefix) {
			g, err := kpool.ParseGroup(u[len(GroupPrefix):])
			if err != nil {
				return fmt.Errorf("%s: %v; write %sNAME", field, err, GroupPrefix)
			}
			c.groups[g] = true
			continue
		}
		if t, ok := strings.CutPrefix(u, TeamPrefix); ok {
			if _, err := kpool.ParseTeam(t); err != nil {
				return fmt.Errorf("%s: %v; write %sNAME", field, err, TeamPrefix)
			}
			c.teams[t] = true
			continue
		}
		if strings.Contains(u, ":") {
			return fmt.Errorf("%s: %q: an entry is an e-mail address, %s, %sNAME or %sNAME", field, u, Any, GroupPrefix, TeamPrefix)
		}
		e, err := kpool.ParseEmail(u)
		if err != nil {
			return fmt.Errorf("%s: %v (an entry is an e-mail address, %s or %sNAME)", field, err, Any, GroupPrefix)
		}
		c.users[e] = true
	}
	return nil
}

// article is "an" before a word that starts with a vowel (an AKS, an
// api-key), else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("AEIOUaeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
