import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes: one `memcmp`, where `elementsEqual` walks them
    /// byte by byte through iterators.
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard let base = baseAddress, let otherBase = other.baseAddress else { return true }
        return memcmp(base, otherBase, count) == 0
    }
}
