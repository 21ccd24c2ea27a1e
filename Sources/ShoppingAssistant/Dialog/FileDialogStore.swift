import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the current dialog in one file, by default `dialog.bin` beside the identity file
/// (`FileIdentityStore.defaultLocation`), written atomically (`AtomicFile`): after a crash at
/// any moment the file holds the dialog before the change or after it (D18).
///
/// Reading refuses what is not a regular file or is larger than `maximumFileBytes`, so a
/// foreign file costs neither memory nor time; its contents are checked by the engine.
public final class FileDialogStore: DialogStore {
    /// The dialog file; its directory is created on the first save.
    public let fileURL: URL
    /// More than a long dialog's file; a larger file is not read (D20: it is not restored).
    public let maximumFileBytes: Int

    /// What went wrong with the file, as the engine logs it.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, naming the file.
        public let description: String
    }

    /// Nothing is read or written until the engine does, so creating a store is free and cannot fail.
    public init(fileURL: URL, maximumFileBytes: Int = 64 * 1024 * 1024) {
        self.fileURL = fileURL
        self.maximumFileBytes = maximumFileBytes
    }

    /// `dialog.bin` in the directory of `FileIdentityStore.defaultLocation`: per user, like the uid.
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        FileIdentityStore.defaultLocation(environment: environment).deletingLastPathComponent()
            .appendingPathComponent("dialog.bin")
    }

    /// The file's bytes, `nil` when there is no file.
    public func loadDialog() throws -> Data? {
        let path = fileURL.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw Failure(description: "\(path) cannot be read (errno \(errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Failure(description: "\(path) is not a regular file") }
        guard info.st_size <= maximumFileBytes else {
            throw Failure(description: "\(path) is too large (\(info.st_size) bytes)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "\(path) cannot be read")
        }
        return data
    }

    /// Replaces the file atomically.
    public func saveDialog(_ data: Data) throws {
        let directory = fileURL.deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if let failure = AtomicFile.replace(fileURL.path, with: data) {
            throw Failure(description: "the dialog could not be saved to \(fileURL.path): \(failure)")
        }
    }

    /// Removes the file; no file is no failure.
    public func removeDialog() throws {
        guard unlink(fileURL.path) == 0 || errno == ENOENT else {
            throw Failure(description: "\(fileURL.path) could not be removed (errno \(errno))")
        }
    }
}
