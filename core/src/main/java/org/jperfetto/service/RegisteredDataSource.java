package org.jperfetto.service;

import org.jperfetto.protos.DataSourceDescriptor;

/** A data source a producer registered: sessions that name it get an instance on that producer. */
record RegisteredDataSource(int producerId, DataSourceDescriptor descriptor) {}
