/**
 * The operating-system layer: the project's only FFM downcalls (Linux x86_64 / aarch64).
 *
 * <ul>
 *   <li>{@link org.jperfetto.os.UnixSocket}: AF_UNIX stream sockets (filesystem paths and
 *       {@code "@abstract"} names), one SCM_RIGHTS descriptor per message, SO_PEERCRED.
 *   <li>{@link org.jperfetto.os.Epoll}: a level-triggered readiness loop with a cross-thread
 *       wakeup.
 *   <li>{@link org.jperfetto.os.MemFd} and {@link org.jperfetto.os.SharedMapping}: sealed
 *       memfds and their shared mappings, the transport of the shared memory buffer.
 *   <li>{@link org.jperfetto.os.Fds}: close, dup.
 * </ul>
 *
 * <p>Every failure is an {@link org.jperfetto.os.ErrnoException} naming the call, what it was
 * applied to and the errno; EINTR is retried inside. "Would block" is not an exception on the
 * hot paths: {@code send}/{@code receive} return -1 and {@code accept} returns null. All
 * descriptors are created close-on-exec. The hot paths use per-thread native scratch memory and
 * allocate nothing on the Java heap.
 *
 * <p>Ownership: whoever receives a descriptor closes it. Closing a socket or an epoll while
 * another thread is inside a call on it is the caller's race to avoid (the number could be
 * reused); {@link org.jperfetto.os.UnixSocket#shutdown()} is the way to unblock a reader.
 */
package org.jperfetto.os;
