/// Decides, hunk by hunk, which changes of a blessing to take (`--bless=interactive`, as cram's
/// `-i`): each hunk is shown as a unified diff hunk and kept only when `accepts` says yes.
package struct HunkReview: Sendable {
    private let decide: @Sendable ([String]) -> Bool

    /// A review that asks `decide` about each hunk (its lines, header first).
    package init(_ decide: @escaping @Sendable ([String]) -> Bool) {
        self.decide = decide
    }

    /// Whether the change shown by `hunk` is taken.
    func accepts(_ hunk: [String]) -> Bool { decide(hunk) }
}
