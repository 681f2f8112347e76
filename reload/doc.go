// Package reload keeps a running rule set in step with its files: it
// polls the files' names, sizes and modification times and, when any
// changes (an edit, a new file, a removed one), loads them again and hands
// the rules to the engine, which replaces only the rules that changed and
// keeps the previous version of a rule whose new one does not validate.
//
// Polling rather than inotify: it works the same on every file system,
// including a ConfigMap mounted into a pod (updated by a symlink swap),
// and costs one stat per file per interval.
//
// Rules is the rule set of kreact run as a lifecycle component: the first
// load, the wait for the caches and Loop, each problem logged on a line of
// its own; a reload logs again only the problems of the files that
// changed, and counts the others.
package reload
