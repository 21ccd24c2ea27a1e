extension Task where Success == Void, Failure == Never {
    /// A task that runs on the calling thread until it first suspends, where the runtime has
    /// `Task.immediate`, and otherwise a task like any other.
    static func startingNow(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            return Task.immediate(operation: operation)
        }
        return Task(operation: operation)
    }
}
