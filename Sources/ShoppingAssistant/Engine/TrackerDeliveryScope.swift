/// Whether the current task is the tracker delivering a lifecycle event or a tracking URL:
/// requests nothing the user sees waits for (B13). A transport wrapper of the package reads it
/// (the transcript recorder keeps no real-time latency for them); nothing on the wire says so.
package enum TrackerDeliveryScope {
    @TaskLocal package static var isActive = false
}
