#ifndef AQ_DB_H
#define AQ_DB_H
#endif
