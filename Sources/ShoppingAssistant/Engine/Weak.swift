/// An object held weakly, for work that must not keep it alive: a host callback's report to
/// its engine (H2), the tracker's deadline watcher while it sleeps.
struct Weak<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?

    init(_ object: Object?) { self.object = object }
}
