extension Task where Failure == Never {
    /// The task's value. If the awaiting task is cancelled first — a test whose time limit
    /// passed — this task is cancelled too, so a call that never returns ends the test as a
    /// failure instead of hanging the run (`Task.value` alone does not forward cancellation).
    public var valueUnlessCancelled: Success {
        get async {
            await withTaskCancellationHandler {
                await value
            } onCancel: {
                cancel()
            }
        }
    }
}

extension Task where Failure == any Error {
    /// The task's value or error; like the non-throwing variant, cancelling the awaiting task
    /// cancels this one.
    public var valueUnlessCancelled: Success {
        get async throws {
            try await withTaskCancellationHandler {
                try await value
            } onCancel: {
                cancel()
            }
        }
    }
}
