import Foundation

/// Runs a process's async work on the thread that starts it, and nowhere else.
///
/// A command of `margin` does one thing at a time: its `await`s wait for SQLite or for poppler,
/// never for each other. Swift's global executor would run that work on Dispatch's threads,
/// which the first job starts (two threads, their stacks and heaps, an epoll descriptor): about
/// 0.8 ms of every command here, a fifth of `margin --version`. `run` instead starts the work
/// as a task whose executor is this thread, and runs each of its jobs here as it becomes ready,
/// until the work ends. A job may still be made ready from another thread (a continuation
/// resumed there): this thread sleeps until one is.
///
/// Inside that work `isOn` is true: code that would move blocking work off the caller's thread
/// (so that a server's other requests go on meanwhile) does it in place instead.
public enum OneThread {
    /// True in the work `run` runs (and in the tasks it starts).
    @TaskLocal public static var isOn = false

    /// Runs `body` to its end on this thread (see the type's documentation), then returns.
    public static func run(_ body: @escaping @Sendable () async -> Void) {
        let executor = ThreadExecutor()
        Task(executorPreference: executor) {
            await $isOn.withValue(true) { await body() }
            executor.finish()
        }
        executor.runJobs()
    }
}

/// Jobs queued from any thread, run on the thread that calls `runJobs`.
private final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(ready)
        pthread_mutex_unlock(mutex)
    }

    func finish() {
        pthread_mutex_lock(mutex)
        finished = true
        pthread_cond_signal(ready)
        pthread_mutex_unlock(mutex)
    }

    /// Runs jobs as they come until `finish` is called and none is left.
    func runJobs() {
        var batch: [UnownedJob] = []
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !finished { pthread_cond_wait(ready, mutex) }
            if jobs.isEmpty {
                pthread_mutex_unlock(mutex)
                return
            }
            swap(&batch, &jobs)
            pthread_mutex_unlock(mutex)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
