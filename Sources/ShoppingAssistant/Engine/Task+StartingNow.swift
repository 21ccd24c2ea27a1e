extension Task where Success == Void, Failure == Never {
    /// Whether `startingNow` runs its task on the calling thread up to the task's first
    /// suspension: only where both the compiler (6.2 and later) and the runtime (Linux; macOS,
    /// iOS, watchOS, tvOS and visionOS 26 and later) have `Task.immediate`. Nothing the engine
    /// promises depends on it; it only saves a thread hop (see `AssistantEngine.spawnRequest`).
    package static var startsOnCallingThread: Bool {
        #if compiler(>=6.2)
            if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) { return true }
        #endif
        return false
    }

    /// A task that runs on the calling thread until it first suspends, where
    /// `startsOnCallingThread`, and otherwise a task like any other.
    static func startingNow(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        #if compiler(>=6.2)
            if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
                return Task.immediate(operation: operation)
            }
        #endif
        return Task(operation: operation)
    }
}
