import Foundation

/// Entry points for `assistant-bench` into the dialog file's codec, which is internal: the
/// bench weighs what saving a long dialog costs on every change (D18) apart from the disk.
package enum DialogStoreBenchmarks {
    /// Reads a dialog file once and returns what saving that dialog again does before the
    /// store writes it: encoding it whole, its byte count returned; `nil` when the bytes are
    /// not a dialog.
    package static func encoder(for data: Data) -> (@Sendable () -> Int)? {
        guard let dialog = try? StoredDialogCodec.decode(data) else { return nil }
        return { StoredDialogCodec.encode(dialog).count }
    }
}
