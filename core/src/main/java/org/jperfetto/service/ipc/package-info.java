/**
 * The tracing service on sockets: {@link org.jperfetto.service.ipc.ServiceHost} runs a
 * {@link org.jperfetto.service.TracingService} with ProducerPort
 * ({@link org.jperfetto.service.ipc.ProducerPortService}) on one or more producer sockets and
 * ConsumerPort ({@link org.jperfetto.service.ipc.ConsumerPortService}) on the consumer socket.
 *
 * <p>Threads: requests are decoded on the IPC host's loop thread and posted to the service's
 * task runner; the service answers through the {@code MethodCall}, from its own thread. Producer
 * SMBs are sealed memfds ({@link org.jperfetto.service.ipc.MemfdSharedMemory}) whose fd travels
 * with the setup_tracing command.
 */
package org.jperfetto.service.ipc;
