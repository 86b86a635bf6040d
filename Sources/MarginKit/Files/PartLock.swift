import Foundation

/// An exclusive `flock` on a lock file beside a resumable part. `init` returns nil when another
/// download holds it. The lock file is removed on release while still locked, and a lock whose
/// file was replaced meanwhile is not trusted, so two holders can never overlap.
package final class PartLock {
    private let path: String
    private var descriptor: Int32

    package init?(path: String) {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        var held = stat()
        var named = stat()
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &held) == 0, stat(path, &named) == 0,
            held.st_ino == named.st_ino, held.st_dev == named.st_dev
        else {
            close(descriptor)
            descriptor = -1
            return nil
        }
    }

    package func release() {
        guard descriptor >= 0 else { return }
        unlink(path)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
