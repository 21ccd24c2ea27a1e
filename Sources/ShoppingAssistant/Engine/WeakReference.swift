/// An object held weakly, for work that must not keep it alive: a host callback's report to
/// its engine (H2).
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?

    init(_ object: Object?) { self.object = object }
}
